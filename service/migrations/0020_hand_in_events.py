# A hand-in is an event (issue #46): the gradebook kept one submission per student and file hash, so
# a file handed in again (A, B, A) was the job of the row made for its first hand-in, and kept its
# first time. Each such later hand-in gets a submission of its own now, at its own time, with the
# results of the row it shared (the same file, graded the same): no job, row or result is lost, and
# every hand-in is in the history again. Regrades' jobs keep the submission they graded again.

from django.db import migrations


def hand_ins_apart(apps, schema_editor):
    alias = schema_editor.connection.alias
    Job = apps.get_model("service", "Job")
    Submission = apps.get_model("gradebook", "Submission")
    Result = apps.get_model("gradebook", "Result")
    jobs = Job.objects.using(alias).filter(regrade=False, submission__isnull=False).order_by("id")
    seen: set[int] = set()
    for job in jobs.iterator():
        if job.submission_id not in seen:  # the row's own, first hand-in
            seen.add(job.submission_id)
            continue
        shared = Submission.objects.using(alias).get(pk=job.submission_id)
        results = list(Result.objects.using(alias).filter(submission_id=shared.pk))
        shared.pk = None
        shared.submitted_at = job.created_at
        shared.save(using=alias, force_insert=True)
        for result in results:
            result.pk = None
            result.submission_id = shared.pk
        Result.objects.using(alias).bulk_create(results)
        Job.objects.using(alias).filter(pk=job.pk).update(submission_id=shared.pk)


class Migration(migrations.Migration):
    dependencies = [
        ("gradebook", "0014_hand_in_events"),
        ("service", "0019_score_placements"),
    ]

    operations = [migrations.RunPython(hand_ins_apart, migrations.RunPython.noop)]
