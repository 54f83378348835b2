"""The change log (gradebook.versions): which students each write changed, filled by triggers on
the same tables as the version's, so a kept grade table is updated for only those students."""

from django.db import migrations, models


def create(apps, schema_editor):
    from gradebook.versions import install

    install(schema_editor.connection)


def remove(apps, schema_editor):
    from gradebook.versions import uninstall_changes

    uninstall_changes(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("gradebook", "0008_data_version"),
    ]

    operations = [
        migrations.CreateModel(
            name="DataChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("student_pk", models.BigIntegerField(null=True)),
                ("tag", models.BigIntegerField()),
            ],
            options={
                "indexes": [models.Index(fields=["tag"], name="gradebook_datachange_tag")],
            },
        ),
        migrations.RunPython(create, remove),
    ]
