# Failed sign-ins are counted by django-axes now (its own tables, its own migrations).

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("service", "0008_closed_assignment"),
    ]

    operations = [
        migrations.DeleteModel(name="SignInFailure"),
    ]
