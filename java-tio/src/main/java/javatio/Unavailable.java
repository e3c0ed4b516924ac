package javatio;

/** A backend is down, refuses, or did not answer within BACKEND_TIMEOUT_MS (pool wait included): 503. */
final class Unavailable extends Exception {
    Unavailable(String what, Throwable cause) {
        super(what, cause, false, false);
    }
}
