"""Development stand-ins and the local stack runner. Never packaged into a Lambda."""
