def retry(fn, attempts):
    for i in range(attempts):
        try:
            return fn()
        except IOError as e:
            logger.warning("attempt %d of %d failed: %s", i, attempts, e)
    raise RuntimeError(f"gave up after {attempts} attempts")

def check(x):
    if x < 0:
        raise ValueError("negative values are not allowed here")
    print("value is fine and dandy")
