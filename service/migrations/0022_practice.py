# Checks a student can run but not read (issue #51): a student's runs of an assignment's practice
# checks, queued by the site and run by a worker, each kept with its result for its student alone.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("gradebook", "0001_initial"), ("service", "0021_exam_results_shown")]

    operations = [
        migrations.CreateModel(
            name="PracticeJob",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("assignment", models.CharField(max_length=200)),
                ("file", models.CharField(max_length=500)),
                ("original_name", models.CharField(max_length=300)),
                ("sha256", models.CharField(max_length=64)),
                ("question", models.CharField(blank=True, max_length=200)),
                (
                    "state",
                    models.CharField(
                        choices=[("queued", "queued"), ("running", "running"), ("done", "done"), ("failed", "failed")],
                        db_index=True,
                        default="queued",
                        max_length=20,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("finished_at", models.DateTimeField(null=True)),
                ("worker", models.CharField(blank=True, max_length=200)),
                ("lease", models.CharField(blank=True, max_length=32)),
                ("lease_expires_at", models.DateTimeField(null=True)),
                ("attempts", models.PositiveIntegerField(default=0)),
                ("result", models.JSONField(null=True)),
                ("error", models.TextField(blank=True)),
                (
                    "handed_in",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="practice_jobs",
                        to="service.job",
                    ),
                ),
                (
                    "student",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="practice_jobs",
                        to="gradebook.student",
                    ),
                ),
            ],
            options={
                "ordering": ["id"],
                "indexes": [
                    models.Index(fields=["student", "assignment", "created_at"], name="service_pra_student_22f90c_idx")
                ],
            },
        ),
    ]
