# A job's upload kept relative to the service's state folder (issue #37): a gradebook and state
# folder restored at another path kept the uploads' old absolute paths, and a staff regrade there
# recorded "your submission could not be read" over a correct grade. Every absolute path the
# service wrote (<state>/uploads/<assignment>/<folder>/<file>) is rewritten to its last four parts;
# any other path is left as it was (the worker reads an absolute path as it is).

from pathlib import PurePosixPath

from django.db import migrations


def relative_upload(stored: str) -> str:
    path = PurePosixPath(stored)
    if not path.is_absolute() or len(path.parts) < 5 or path.parts[-4] != "uploads":
        return stored
    return str(PurePosixPath(*path.parts[-4:]))


def forwards(apps, schema_editor):
    Job = apps.get_model("service", "Job")
    for pk, file in Job.objects.filter(file__startswith="/").values_list("id", "file").iterator():
        relative = relative_upload(file)
        if relative != file:
            Job.objects.filter(id=pk).update(file=relative)


class Migration(migrations.Migration):
    dependencies = [
        ("service", "0015_lease_tokens"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
