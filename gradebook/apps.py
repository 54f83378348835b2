from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _triggers(using: str = "default", **_: object) -> None:
    """The data version's triggers, again after every migration: SQLite rebuilds a table that a
    migration alters, and the rebuilt table has none (gradebook.versions)."""
    from django.db import connections

    from .versions import install

    install(connections[using])


class GradebookConfig(AppConfig):
    name = "gradebook"
    label = "gradebook"
    verbose_name = "Gradebook"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(_triggers, sender=self, dispatch_uid="gradebook-version-triggers")
