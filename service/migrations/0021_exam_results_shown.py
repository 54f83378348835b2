# When a student sees an online exam's results (issue #51): two more values of the exam's results
# setting, during the exam and when the staff publish them, and who published them and when. The
# values stored so far keep their meaning.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("service", "0020_hand_in_events")]

    operations = [
        migrations.AlterField(
            model_name="onlineexam",
            name="results",
            field=models.CharField(
                choices=[
                    ("during", "during the exam, each answer's as it is saved"),
                    ("at_submit", "when the attempt ends"),
                    ("after_close", "after the exam closes"),
                    ("published", "when the staff publish them"),
                    ("never", "never"),
                ],
                default="after_close",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="onlineexam",
            name="published_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="onlineexam",
            name="published_by",
            field=models.CharField(blank=True, max_length=150),
        ),
    ]
