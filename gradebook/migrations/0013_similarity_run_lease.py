# A similarity run's claim token and lease (gradebook.leases): the run's end is written only by the
# worker that holds it (issue #37).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("gradebook", "0012_student_dropped_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="similarityrun", name="lease", field=models.CharField(blank=True, max_length=32)
        ),
        migrations.AddField(model_name="similarityrun", name="lease_expires_at", field=models.DateTimeField(null=True)),
    ]
