"""The agent-kernel Python driver, as a package: one module per job, booted by main.run().

Shipped inside the agent-kernel crate (src/driver.rs lists the modules in import order). The host
runs it in the project's own interpreter: imported from a per-user cache directory (so its
bytecode is cached), or, inside a sandbox, with each module's source passed on the command line
and executed into this same package layout. Nothing here is imported at start-up beyond C-level
modules, so the kernel's cold start stays close to a bare `python -c pass`.
"""

# the prefix of the file names the driver's modules are compiled under when passed as source
SOURCE_NAME = "<agent-kernel"


def public(cls):
    """Show a class a cell can catch (ToolError, ...) under its bare name, like a builtin."""
    cls.__qualname__ = cls.__name__
    cls.__module__ = "builtins"
    return cls
