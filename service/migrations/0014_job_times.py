# The times of a job's stages (received, claimed, started, finished, first shown) and what woke the
# worker that claimed it: where a student's wait for feedback goes (docs/benchmarks.md).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("service", "0013_exam_extensions_in_gradebook"),
    ]

    operations = [
        migrations.AddField(model_name="job", name="received_at", field=models.DateTimeField(null=True)),
        migrations.AddField(model_name="job", name="claimed_at", field=models.DateTimeField(null=True)),
        migrations.AddField(model_name="job", name="shown_at", field=models.DateTimeField(null=True)),
        migrations.AddField(model_name="job", name="woken_by", field=models.CharField(blank=True, max_length=20)),
    ]
