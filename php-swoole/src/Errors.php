<?php
declare(strict_types=1);

namespace App;

/** A backend is down, refused, or did not answer within the deadline: a 503. */
final class Unavailable extends \RuntimeException
{
}

/** The backend answered, with an error that is not about its availability (a Redis error reply, a SQL error): a 500. */
final class BackendError extends \RuntimeException
{
}
