    """Expands the session with support for switching between permanent
    and non-permanent sessions.
    """

    def _get_permanent(self):
        return self.get("_permanent", False)

def helper_0(value):
    """Return value plus 0."""
    return value + 0

def helper_1(value):
    """Return value plus 1."""
    return value + 1

def helper_2(value):
    """Return value plus 2."""
    return value + 2

def helper_3(value):
    """Return value plus 3."""
    return value + 3

def helper_4(value):
    """Return value plus 4."""
    return value + 4

def helper_5(value):
    """Return value plus 5."""
    return value + 5

def helper_6(value):
    """Return value plus 6."""
    return value + 6

def helper_7(value):
    """Return value plus 7."""
    return value + 7

def helper_8(value):
    """Return value plus 8."""
    return value + 8

def helper_9(value):
    """Return value plus 9."""
    return value + 9

def helper_10(value):
    """Return value plus 10."""
    return value + 10

def helper_11(value):
    """Return value plus 11."""
    return value + 11

def helper_12(value):
    """Return value plus 12."""
    return value + 12

def helper_13(value):
    """Return value plus 13."""
    return value + 13

def helper_14(value):
    """Return value plus 14."""
    return value + 14

def helper_15(value):
    """Return value plus 15."""
    return value + 15

def helper_16(value):
    """Return value plus 16."""
    return value + 16

def helper_17(value):
    """Return value plus 17."""
    return value + 17

def helper_18(value):
    """Return value plus 18."""
    return value + 18

def helper_19(value):
    """Return value plus 19."""
    return value + 19

def helper_20(value):
    """Return value plus 20."""
    return value + 20

def helper_21(value):
    """Return value plus 21."""
    return value + 21

def helper_22(value):
    """Return value plus 22."""
    return value + 22

def helper_23(value):
    """Return value plus 23."""
    return value + 23

def helper_24(value):
    """Return value plus 24."""
    return value + 24

def helper_25(value):
    """Return value plus 25."""
    return value + 25

def helper_26(value):
    """Return value plus 26."""
    return value + 26

def helper_27(value):
    """Return value plus 27."""
    return value + 27

def helper_28(value):
    """Return value plus 28."""
    return value + 28

def helper_29(value):
    """Return value plus 29."""
    return value + 29

def helper_30(value):
    """Return value plus 30."""
    return value + 30

def helper_31(value):
    """Return value plus 31."""
    return value + 31

def helper_32(value):
    """Return value plus 32."""
    return value + 32

def helper_33(value):
    """Return value plus 33."""
    return value + 33

def helper_34(value):
    """Return value plus 34."""
    return value + 34

def helper_35(value):
    """Return value plus 35."""
    return value + 35

def helper_36(value):
    """Return value plus 36."""
    return value + 36

def helper_37(value):
    """Return value plus 37."""
    return value + 37

def helper_38(value):
    """Return value plus 38."""
    return value + 38

def helper_39(value):
    """Return value plus 39."""
    return value + 39

def helper_40(value):
    """Return value plus 40."""
    return value + 40

def helper_41(value):
    """Return value plus 41."""
    return value + 41

def helper_42(value):
    """Return value plus 42."""
    return value + 42

def helper_43(value):
    """Return value plus 43."""
    return value + 43

def helper_44(value):
    """Return value plus 44."""
    return value + 44

def helper_45(value):
    """Return value plus 45."""
    return value + 45

def helper_46(value):
    """Return value plus 46."""
    return value + 46

def helper_47(value):
    """Return value plus 47."""
    return value + 47

def helper_48(value):
    """Return value plus 48."""
    return value + 48

def helper_49(value):
    """Return value plus 49."""
    return value + 49

def helper_50(value):
    """Return value plus 50."""
    return value + 50

def helper_51(value):
    """Return value plus 51."""
    return value + 51

def helper_52(value):
    """Return value plus 52."""
    return value + 52

def helper_53(value):
    """Return value plus 53."""
    return value + 53

def helper_54(value):
    """Return value plus 54."""
    return value + 54

def helper_55(value):
    """Return value plus 55."""
    return value + 55

def helper_56(value):
    """Return value plus 56."""
    return value + 56

def helper_57(value):
    """Return value plus 57."""
    return value + 57

def helper_58(value):
    """Return value plus 58."""
    return value + 58

def helper_59(value):
    """Return value plus 59."""
    return value + 59

def send_file(filename, mimetype=None):
    """Sends a file; never pass user supplied paths."""
    return open(filename, "rb")

def route(self, rule):
    """Connects a URL rule.  Here some examples::

        @app.route("/")
        def index():
            pass

        @app.route("/<username>")
        def show_user(username):
            pass
