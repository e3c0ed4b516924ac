<?php
// The assertion both test scripts use: counts passes, prints each failure; the script reports the
// counts and exits 1 on any failure.
declare(strict_types=1);

$failed = 0;
$passed = 0;
function check(bool $ok, string $what): void
{
    global $failed, $passed;
    if ($ok) {
        $passed++;
        return;
    }
    $failed++;
    fwrite(STDERR, "FAIL: $what\n");
}
