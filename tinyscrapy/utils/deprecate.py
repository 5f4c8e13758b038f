"""
Scrapy's C{scrapy.utils.deprecate}: helpers for a library (a plugin) that renames or retires
parts of its API, with Scrapy's warnings.

    - L{create_deprecated_class}: an old class name that still works, and warns;
    - L{update_classpath}: a component's old dotted path read as its new one
      (L{DEPRECATION_RULES});
    - L{method_is_overridden}, L{argument_is_required}: what a subclass or a function
      does, to keep an old calling convention working;
    - L{attribute}, L{warn_on_deprecated_spider_attribute}: the warnings themselves.
"""

import inspect
import warnings

from tinyscrapy.exceptions import ScrapyDeprecationWarning


def attribute(obj, oldattr, newattr, version="0.12"):
    """Warn that C{obj.oldattr} is deprecated in favour of C{obj.newattr}."""
    name = type(obj).__name__
    warnings.warn(f"{name}.{oldattr} attribute is deprecated and will be no longer supported "
                  f"in Scrapy {version}, use {name}.{newattr} attribute instead",
                  ScrapyDeprecationWarning, stacklevel=3)


def create_deprecated_class(name, new_class, clsdict=None,
                            warn_category=ScrapyDeprecationWarning, warn_once=True,
                            old_class_path=None, new_class_path=None,
                            subclass_warn_message="{cls} inherits from deprecated class "
                                                  "{old}, please inherit from {new}.",
                            instance_warn_message="{cls} is deprecated, instantiate {new} "
                                                  "instead."):
    """
    An old name for C{new_class}: a subclass of it that warns when it is subclassed (once,
    with C{warn_once}) or instantiated itself (its subclasses' instances do not warn).
    C{isinstance} and C{issubclass} against it hold for C{new_class} and its subclasses
    too, so checks written against the old name keep working.

        OldName = create_deprecated_class("OldName", NewName)

    @param clsdict: attributes of the old class.
    @param old_class_path: how the warnings name the old class (else its module and name).
    @param new_class_path: how they name the new one.
    @return: the old class, with the caller's module as its C{__module__}.
    """
    meta = type(new_class)

    class DeprecatedClass(meta):
        deprecated_class = None
        warned_on_subclass = False

        def __new__(mcs, cls_name, bases, namespace):
            cls = super().__new__(mcs, cls_name, bases, namespace)
            if mcs.deprecated_class is None:
                mcs.deprecated_class = cls
            return cls

        def __init__(cls, cls_name, bases, namespace):
            kind = type(cls)
            old = kind.deprecated_class
            if old in bases and not (warn_once and kind.warned_on_subclass):
                kind.warned_on_subclass = True
                message = subclass_warn_message.format(
                    cls=_class_path(cls), old=_class_path(old, old_class_path),
                    new=_class_path(new_class, new_class_path))
                if warn_once:
                    message += " (warning only on first subclass, there may be others)"
                warnings.warn(message, warn_category, stacklevel=2)
            super().__init__(cls_name, bases, namespace)

        def __instancecheck__(cls, instance):
            return any(cls.__subclasscheck__(kind)
                       for kind in {type(instance), instance.__class__})

        def __subclasscheck__(cls, subclass):
            if cls is not DeprecatedClass.deprecated_class:  # a subclass of the old one
                return super().__subclasscheck__(subclass)
            if not inspect.isclass(subclass):
                raise TypeError("issubclass() arg 1 must be a class")
            return any(base in (cls, new_class) for base in getattr(subclass, "__mro__", ()))

        def __call__(cls, *args, **kwargs):
            if cls is DeprecatedClass.deprecated_class:
                warnings.warn(instance_warn_message.format(
                    cls=_class_path(cls, old_class_path),
                    new=_class_path(new_class, new_class_path)), warn_category, stacklevel=2)
            return super().__call__(*args, **kwargs)

    old_class = DeprecatedClass(name, (new_class,), clsdict or {})
    try:
        module = inspect.getmodule(inspect.stack()[1][0])
    except Exception as e:  # e.g. called from a template engine's frames
        warnings.warn(f"Error detecting parent module: {e!r}", stacklevel=2)
    else:
        if module is not None:
            old_class.__module__ = module.__name__
    return old_class


def _class_path(cls, forced=None):
    return forced if forced is not None else f"{cls.__module__}.{cls.__name__}"


# (old prefix, new prefix) of component paths that moved; Scrapy 2.19 has none left
DEPRECATION_RULES = []


def update_classpath(path):
    """C{path} with its prefix updated by the first rule of L{DEPRECATION_RULES} that
    matches (warning that the old one is deprecated); anything else as it is."""
    for prefix, replacement in DEPRECATION_RULES:
        if isinstance(path, str) and path.startswith(prefix):
            new_path = replacement + path[len(prefix):]
            warnings.warn(f"`{path}` class is deprecated, use `{new_path}` instead",
                          ScrapyDeprecationWarning, stacklevel=2)
            return new_path
    return path


def method_is_overridden(subclass, base_class, method_name):
    """Whether C{subclass} (or a class between it and C{base_class}) defines its own
    C{method_name} instead of C{base_class}'s."""
    base_method = getattr(base_class, method_name)
    sub_method = getattr(subclass, method_name)
    return base_method.__code__ is not sub_method.__code__


def argument_is_required(func, arg_name):
    """Whether C{func} takes C{arg_name} without a default."""
    from tinyscrapy.utils.python import get_func_args_dict
    parameter = get_func_args_dict(func).get(arg_name)
    return parameter is not None and parameter.default is inspect.Parameter.empty


def warn_on_deprecated_spider_attribute(attribute_name, setting_name):
    """Warn that the spider attribute C{attribute_name} is deprecated in favour of the
    setting C{setting_name}."""
    warnings.warn(f"The '{attribute_name}' spider attribute is deprecated. Use "
                  f"Spider.custom_settings or Spider.update_settings() instead. The "
                  f"corresponding setting name is '{setting_name}'.",
                  ScrapyDeprecationWarning, stacklevel=2)
