from django.db import migrations, models


def merge_duplicates(apps, schema_editor):
    """Threads opened twice for one question (two requests at once, before the constraint): the
    later ones' messages move to the first, which stays open if any of them was."""
    ReviewRequest = apps.get_model("service", "ReviewRequest")
    ReviewMessage = apps.get_model("service", "ReviewMessage")
    first: dict = {}
    for review in ReviewRequest.objects.order_by("id"):
        key = (review.job_id, review.question_id)
        if key not in first:
            first[key] = review
            continue
        kept = first[key]
        ReviewMessage.objects.filter(request=review).update(request=kept)
        if review.state == "open" and kept.state != "open":
            kept.state = "open"
            kept.save(update_fields=["state"])
        review.delete()


class Migration(migrations.Migration):
    dependencies = [
        ("service", "0010_score_to_send"),
    ]

    operations = [
        migrations.RunPython(merge_duplicates, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="reviewrequest",
            constraint=models.UniqueConstraint(fields=("job", "question_id"), name="one_review_per_question"),
        ),
    ]
