from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class ServiceConfig(AppConfig):
    name = "service"
    label = "service"
    verbose_name = "Grading service"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from .core.logs import connect_signals
        from .operations import checks  # noqa: F401  (our system checks, registered on import)

        connect_signals()


class ConsoleConfig(admin_apps.AdminConfig):
    """Django's admin, with the service's site (service/operations/console.py) as its default one."""

    default = False  # named in INSTALLED_APPS; ServiceConfig stays the service app's own
    default_site = "service.operations.console.ConsoleSite"
