# Each question of an online exam may have its own results setting over the exam's, and its own
# publishing with who and when (issue #51). No row: the question follows the exam, as every one did.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("service", "0023_lesson_answers")]

    operations = [
        migrations.CreateModel(
            name="ExamQuestionResults",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("question", models.CharField(max_length=200)),
                (
                    "results",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("during", "during the exam, each answer's as it is saved"),
                            ("at_submit", "when the attempt ends"),
                            ("after_close", "after the exam closes"),
                            ("published", "when the staff publish them"),
                            ("never", "never"),
                        ],
                        max_length=20,
                    ),
                ),
                ("published_at", models.DateTimeField(blank=True, null=True)),
                ("published_by", models.CharField(blank=True, max_length=150)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "exam",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="question_results",
                        to="service.onlineexam",
                    ),
                ),
            ],
            options={"ordering": ["id"]},
        ),
        migrations.AddConstraint(
            model_name="examquestionresults",
            constraint=models.UniqueConstraint(fields=("exam", "question"), name="one_results_per_question"),
        ),
    ]
