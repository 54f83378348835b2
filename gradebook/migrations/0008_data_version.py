"""The grades' version (gradebook.versions): its one row and the triggers that change it on every
write to the tables a grade is derived from."""

import secrets

from django.db import migrations, models


def create(apps, schema_editor):
    from gradebook.versions import install

    apps.get_model("gradebook", "DataVersion").objects.using(schema_editor.connection.alias).create(
        id=1, value=secrets.randbits(62)
    )
    install(schema_editor.connection)


def remove(apps, schema_editor):
    from gradebook.versions import uninstall

    uninstall(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("gradebook", "0007_exam_extensions"),
    ]

    operations = [
        migrations.CreateModel(
            name="DataVersion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("value", models.BigIntegerField()),
            ],
        ),
        migrations.RunPython(create, remove),
    ]
