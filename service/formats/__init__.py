"""Django's dates as every page writes them (service/templatetags/pages.py's ``moment``): the admin's
lists and forms and a model's name use these formats (settings' FORMAT_MODULE_PATH)."""
