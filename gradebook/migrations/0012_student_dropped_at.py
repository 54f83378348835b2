"""A student the course's platform says has left the course (service/lti/roster.py): when, kept
apart from on_roster so that their grades stay and are shown as dropped."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("gradebook", "0011_mark_group"),
    ]

    operations = [
        migrations.AddField(
            model_name="student",
            name="dropped_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
