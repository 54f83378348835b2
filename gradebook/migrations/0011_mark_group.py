"""Which answer group a mark was given through (gradebook.answer_groups), and who marked an exam's
open answer: a mark given to a group is each member's own record, with the group's key in common."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("gradebook", "0010_fingerprint_offsets"),
    ]

    operations = [
        migrations.AddField(
            model_name="mark",
            name="group",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.AddField(
            model_name="exammark",
            name="group",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.AddField(
            model_name="exammark",
            name="marked_by",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
    ]
