# The grading workers seen alive (service/operations/models.py): what /readyz and `check --deploy` read.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("service", "0017_exam_grading"),
    ]

    operations = [
        migrations.CreateModel(
            name="WorkerSeen",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=200, unique=True)),
                ("seen_at", models.DateTimeField(db_index=True)),
            ],
        ),
    ]
