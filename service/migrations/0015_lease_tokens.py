# The claim's token of a job and of a score to send (gradebook.leases): a holder ends its row only
# with the token it claimed it with, so one that lost its lease changes nothing (issue #37).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("service", "0014_job_times"),
    ]

    operations = [
        migrations.AddField(model_name="job", name="lease", field=models.CharField(blank=True, max_length=32)),
        migrations.AddField(model_name="scoretosend", name="lease", field=models.CharField(blank=True, max_length=32)),
    ]
