<?php
// FPM_PARAMS=server, the plain way (README, Tuning): the request's parameters from $_SERVER, which
// PHP builds for every request whose scripts name it. Loaded by index.php only in that mode, so
// the default never builds it.
C::$server = $_SERVER;
