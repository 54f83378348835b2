# A notebook of one's own (issue #52): each submission keeps its report's own_values, the values
# drawn for the student beside those the notebook held, so the staff's pages can say whose they are.
# SQLite remakes the submissions' table to add a JSON column (its check), as 0014 did to drop a
# constraint: the triggers that name it (the results' change log) go first and are put back after,
# by 0014's own functions.

from importlib import import_module

from django.db import migrations, models

triggers = import_module("gradebook.migrations.0014_hand_in_events")


class Migration(migrations.Migration):
    dependencies = [
        ("gradebook", "0015_published"),
    ]

    operations = [
        migrations.RunPython(triggers.drop_triggers, triggers.put_back),
        migrations.AddField(
            model_name="submission",
            name="own_values",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(triggers.put_back, triggers.drop_triggers),
    ]
