"""Crossover's Chalice app: wiring only. Each capability's routes and event sources are a blueprint in
chalicelib/routes/, declared once there (chalicelib/operation.py) and described by /v1/openapi.json."""
from chalicelib.coldstart import FirstEventHeld, collector_held

# A cold start: no cycle collection while the app is built, nor while its first event is answered.
with collector_held():
    from chalice import Chalice

    from chalicelib.operation import answer_other_methods
    from chalicelib.routes import all_operations, conversations, cost, events, health, invoke, jobs, registry, uploads

    app = Chalice(app_name="crossover")

    for capability in (health, invoke, jobs, uploads, conversations, registry, cost, events):
        app.register_blueprint(capability.routes)

    # Last: it answers every other method on the paths registered above.
    answer_other_methods(app, all_operations())
    app.register_middleware(FirstEventHeld(), "all")
