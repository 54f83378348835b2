from django.apps import AppConfig


class ServiceConfig(AppConfig):
    name = "service"
    label = "service"
    verbose_name = "Grading service"
    default_auto_field = "django.db.models.BigAutoField"
