# Each student's score to the column of the placement they launched (service/lti/models.py
# ScorePlacement), and a score posted but never answered kept as possibly sent (ScoreToSend.unconfirmed).
# Nothing to move: a student with no placement recorded gets the course's first column, as before.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("lti_tool", "0008_ltideployment_pns_url_and_more"),
        ("service", "0018_worker_seen"),
    ]

    operations = [
        migrations.AddField(
            model_name="scoretosend",
            name="unconfirmed",
            field=models.BooleanField(default=False),
        ),
        migrations.CreateModel(
            name="ScorePlacement",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("resource_id", models.CharField(max_length=255)),
                ("launched_at", models.DateTimeField()),
                (
                    "context",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="lti_tool.lticontext"
                    ),
                ),
                (
                    "line_item",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="lti_tool.ltilineitem"
                    ),
                ),
                (
                    "lti_user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="lti_tool.ltiuser"
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("lti_user", "context", "resource_id"), name="one_placement_per_user_and_resource"
                    )
                ],
            },
        ),
    ]
