# Published grades (issue #51): the staff publish an assignment's grades, or one hand-graded
# question's marks, and may undo it; each is an event row with who, when and why.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("gradebook", "0014_hand_in_events"),
    ]

    operations = [
        migrations.CreateModel(
            name="Publication",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("question_id", models.CharField(blank=True, max_length=200)),
                ("published", models.BooleanField()),
                ("at", models.DateTimeField()),
                ("by", models.CharField(blank=True, max_length=200)),
                ("reason", models.TextField(blank=True)),
                (
                    "assignment",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="publications",
                        to="gradebook.assignment",
                    ),
                ),
            ],
            options={"ordering": ["id"]},
        ),
    ]
