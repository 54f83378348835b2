# A hand-in is an event (issue #46): every hand-in its own submission row with its own time, whatever
# its bytes (the rows were one per student and file hash, so a file handed in again landed on its
# first row and kept its first time); and the staff's choices of the submission that counts, each
# kept with who and why. No row is changed or lost: the constraint goes, the new table comes. (The
# service's jobs that shared a row are given rows of their own by service's 0019_hand_in_events.)

import django.db.models.deletion
from django.db import migrations, models


def drop_triggers(apps, schema_editor):
    """SQLite remakes the submissions' table to drop its constraint: the triggers that name it (the
    results' change log) go first, and every one is put back after (``put_back``)."""
    if schema_editor.connection.vendor == "sqlite":
        from gradebook.versions import uninstall

        uninstall(schema_editor.connection)


def put_back(apps, schema_editor):
    from gradebook.versions import install

    install(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("gradebook", "0013_similarity_run_lease"),
    ]

    operations = [
        migrations.RunPython(drop_triggers, put_back),
        migrations.RemoveConstraint(model_name="submission", name="one_row_per_submitted_file"),
        migrations.CreateModel(
            name="CountedChoice",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("chosen_at", models.DateTimeField()),
                ("chosen_by", models.CharField(blank=True, max_length=200)),
                ("reason", models.TextField()),
                (
                    "assignment",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="counted_choices",
                        to="gradebook.assignment",
                    ),
                ),
                (
                    "student",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="counted_choices",
                        to="gradebook.student",
                    ),
                ),
                (
                    "submission",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="choices",
                        to="gradebook.submission",
                    ),
                ),
            ],
            options={
                "ordering": ["id"],
                "indexes": [models.Index(fields=["assignment", "student"], name="gradebook_counted_by_student")],
            },
        ),
        migrations.RunPython(put_back, drop_triggers),
    ]
