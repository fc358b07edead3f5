"""The smallest time scale the server honours, in a module of its own: the command line
reads it without importing the server, and the served world without the command line."""

#: The smallest ``--time-scale`` served: the server's timers (asyncio's) and
#: ``retry-after-ms`` keep about a millisecond, so below 0.001 one of their steps is more
#: than a scenario second and no timing check could judge anything.
MIN_TIME_SCALE = 0.001
SCALE_REASON = ("the server keeps time to about a millisecond, and below 0.001 a "
                "millisecond is more than a scenario second")
