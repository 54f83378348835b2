# Lessons' check questions on the site (issue #52): each student's answers, kept as given with their
# result (practice: counted in no score).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("gradebook", "0001_initial"), ("service", "0022_practice")]

    operations = [
        migrations.CreateModel(
            name="LessonAnswer",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("lesson", models.CharField(max_length=200)),
                ("question", models.CharField(max_length=300)),
                ("value", models.TextField()),
                ("right", models.BooleanField()),
                ("at", models.DateTimeField()),
                (
                    "student",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="lesson_answers",
                        to="gradebook.student",
                    ),
                ),
            ],
            options={
                "ordering": ["id"],
                "indexes": [
                    models.Index(fields=["student", "lesson"], name="lesson_answers_of_student"),
                    models.Index(fields=["student", "at"], name="lesson_answers_by_time"),
                    models.Index(fields=["lesson", "question"], name="lesson_answers_of_question"),
                ],
            },
        ),
    ]
