from django.apps import AppConfig


class ServiceConfig(AppConfig):
    name = "service"
    label = "service"
    verbose_name = "Grading service"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import throttle  # noqa: F401 - connects the failed sign-in signal
