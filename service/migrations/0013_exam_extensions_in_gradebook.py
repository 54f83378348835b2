"""A student's accommodations on an online exam move from the service's own table into the
gradebook's exam extensions (the one store of a student's terms), each row as it was."""

from django.db import migrations
from django.utils import timezone


def move_to_gradebook(apps, schema_editor):
    alias = schema_editor.connection.alias
    given = apps.get_model("service", "ExamAccommodation")
    extension = apps.get_model("gradebook", "ExamExtension")
    now = timezone.now()
    extension.objects.using(alias).bulk_create(
        [
            extension(
                exam=row.exam,
                student_id=row.student_id,
                extra_minutes=row.extra_minutes,
                until=row.closes_at,
                attempts=row.attempts,
                granted_at=now,
                granted_by="",
            )
            for row in given.objects.using(alias).all()
        ]
    )


def back_to_service(apps, schema_editor):
    alias = schema_editor.connection.alias
    given = apps.get_model("service", "ExamAccommodation")
    extension = apps.get_model("gradebook", "ExamExtension")
    given.objects.using(alias).bulk_create(
        [
            given(
                exam=row.exam,
                student_id=row.student_id,
                extra_minutes=row.extra_minutes,
                closes_at=row.until,
                attempts=row.attempts,
            )
            for row in extension.objects.using(alias).all()
        ]
    )


class Migration(migrations.Migration):
    dependencies = [
        ("gradebook", "0007_exam_extensions"),
        ("service", "0012_online_exams"),
    ]

    operations = [
        migrations.RunPython(move_to_gradebook, back_to_service),
        migrations.DeleteModel(name="ExamAccommodation"),
    ]
