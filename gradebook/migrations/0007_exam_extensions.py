import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("gradebook", "0006_similarity_fingerprints"),
    ]

    operations = [
        migrations.CreateModel(
            name="ExamExtension",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("exam", models.CharField(max_length=200)),
                ("extra_minutes", models.FloatField(default=0)),
                ("until", models.DateTimeField(blank=True, null=True)),
                ("attempts", models.PositiveIntegerField(default=1)),
                ("granted_at", models.DateTimeField()),
                ("granted_by", models.CharField(blank=True, max_length=200)),
                (
                    "student",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="exam_extensions",
                        to="gradebook.student",
                    ),
                ),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("exam", "student"), name="one_extension_per_exam")],
            },
        ),
    ]
