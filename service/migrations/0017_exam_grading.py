# An online exam graded by a worker, as a job claimed by the one lease rule (issue #37), not in a web request.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("service", "0016_uploads_relative_to_state"),
    ]

    operations = [
        migrations.CreateModel(
            name="ExamGrading",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("exam", models.CharField(db_index=True, max_length=200)),
                (
                    "state",
                    models.CharField(
                        choices=[("queued", "queued"), ("running", "running"), ("done", "done"), ("failed", "failed")],
                        db_index=True,
                        default="queued",
                        max_length=20,
                    ),
                ),
                ("requested_at", models.DateTimeField(auto_now_add=True)),
                ("requested_by", models.CharField(blank=True, max_length=150)),
                ("worker", models.CharField(blank=True, max_length=200)),
                ("lease", models.CharField(blank=True, max_length=32)),
                ("lease_expires_at", models.DateTimeField(null=True)),
                ("attempts", models.PositiveIntegerField(default=0)),
                ("finished_at", models.DateTimeField(null=True)),
                ("graded", models.PositiveIntegerField(default=0)),
                ("error", models.TextField(blank=True)),
            ],
            options={
                "ordering": ["id"],
            },
        ),
    ]
