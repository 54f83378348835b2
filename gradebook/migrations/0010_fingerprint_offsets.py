"""The tokenizer's offsets kept with each fingerprint (gradebook.fingerprints): a similar pair's
shared regions are highlighted in the raw code with no tokenizing again. Rows kept before have none
(NULL): their offsets are found again when they are highlighted."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("gradebook", "0009_data_changes"),
    ]

    operations = [
        migrations.AddField(
            model_name="fingerprint",
            name="offsets",
            field=models.BinaryField(null=True),
        ),
    ]
