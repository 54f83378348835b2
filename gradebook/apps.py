from django.apps import AppConfig


class GradebookConfig(AppConfig):
    name = "gradebook"
    label = "gradebook"
    verbose_name = "Gradebook"
    default_auto_field = "django.db.models.BigAutoField"
