<?php
// Unit tests of the request-validity maps of conf/nginx.conf (plain `php` assertions, no server):
// each map is read from the file and evaluated as nginx's map module does (exact strings first,
// then the regular expressions in order, else `default`; a value `$name` is that variable), with
// PCRE on bytes as nginx compiles them (no flags). Exits 1 on any failure.
declare(strict_types=1);

require __DIR__ . '/check.php';

/** Bytes as printable text (octal escapes) for a failure message. */
function show(string $s): string
{
    return "'" . addcslashes($s, "\0..\37\177..\377") . "'";
}

/** nginx's string token: a double-quoted string (with \" and \\ unescaped) or a bare word. */
function conf_token(string $s): string
{
    if (strlen($s) >= 2 && $s[0] === '"' && $s[-1] === '"') {
        return preg_replace('/\\\\(["\\\\])/', '$1', substr($s, 1, -1));
    }
    return $s;
}

/** Every `map $source $name { key value; ... }` of the file: name => [source, entries, default]. */
function conf_maps(string $conf): array
{
    preg_match_all('/^\s*map\s+\$(\w+)\s+\$(\w+)\s*\{(.*?)^\s*\}/ms', $conf, $blocks, PREG_SET_ORDER);
    $maps = [];
    foreach ($blocks as [, $source, $name, $body]) {
        $entries = [];
        $default = '';
        foreach (explode("\n", $body) as $line) {
            $line = trim($line);
            if ($line === '' || $line[0] === '#') {
                continue;
            }
            if (preg_match('/\A("(?:[^"\\\\]|\\\\.)*"|\S+)\s+("(?:[^"\\\\]|\\\\.)*"|[^;\s]+);\z/', $line, $m) !== 1) {
                throw new RuntimeException("map \$$name: cannot read '$line'");
            }
            if ($m[1] === 'default') {
                $default = conf_token($m[2]);
            } else {
                $entries[] = [conf_token($m[1]), conf_token($m[2])];
            }
        }
        $maps[$name] = [$source, $entries, $default];
    }
    return $maps;
}

/** The value of map $name for the request's variables $vars (source variable => bytes). */
function map_value(array $maps, string $name, array $vars): string
{
    [$source, $entries, $default] = $maps[$name];
    $in = array_key_exists($source, $vars) ? $vars[$source] : map_value($maps, $source, $vars);
    $value = $default;
    $found = false;
    foreach ($entries as [$key, $v]) { // exact strings first
        if ($key === '' || $key[0] !== '~') {
            if ($key === $in) {
                [$value, $found] = [$v, true];
                break;
            }
        }
    }
    if (!$found) {
        foreach ($entries as [$key, $v]) {
            if ($key !== '' && $key[0] === '~') {
                $r = preg_match('/' . str_replace('/', '\/', substr($key, 1)) . '/', $in);
                if ($r === false) {
                    throw new RuntimeException("map \$$name: regex $key does not compile");
                }
                if ($r === 1) {
                    $value = $v;
                    break;
                }
            }
        }
    }
    return (strlen($value) > 1 && $value[0] === '$') ? map_value($maps, substr($value, 1), $vars) : $value;
}

$conf = file_get_contents(__DIR__ . '/../conf/nginx.conf');
$maps = conf_maps($conf);
foreach (['invalid_host', 'invalid_request', 'method_not_implemented', 'refusal_allow'] as $name) {
    check(isset($maps[$name]), "conf/nginx.conf has map \$$name");
}
// The checks run where requests are served (conf/validity.conf, in both serving locations).
$validity = file_get_contents(__DIR__ . '/../conf/validity.conf');
check(preg_match('/if \(\$invalid_request\) \{\s*return 400;/', $validity) === 1, 'validity.conf: $invalid_request is a 400');
check(preg_match('/if \(\$method_not_implemented\) \{\s*return 501;/', $validity) === 1, 'validity.conf: $method_not_implemented is a 501');
check(preg_match_all('/^\s*location (?:\/|= \/mysql) \{\n\s*include \$\{APP_DIR\}\/conf\/validity\.conf;/m', $conf) === 2,
    'both serving locations include validity.conf first');

// What the request-validity section decides here, by its rule: 400 (Host or target), 501 (method),
// or '' (passed on: served, or refused by nginx's parser, noted per case).
$refusal = static function (string $requestLine, ?string $host = 'verify') use ($maps): string {
    [$method, $target] = explode(' ', $requestLine, 3) + ['', '', ''];
    // $request_uri: an absolute-form target's path (nginx's r->unparsed_uri)
    $uri = preg_match('#\Ahttps?://[^/?]*(.*)\z#s', $target, $m) === 1 ? ($m[1] === '' ? '/' : $m[1]) : $target;
    $vars = ['http_host' => $host ?? '', 'request_uri' => $uri, 'request' => $requestLine];
    if (map_value($maps, 'method_not_implemented', $vars) !== '') {
        return '501';
    }
    return map_value($maps, 'invalid_request', $vars) !== '' ? '400' : '';
};
$get = 'GET /hello HTTP/1.1';

// The Host cases of the verifier's request validity (loadtest/harness/contract/protocol.py).
check($refusal($get, 'user@verify') === '400', 'Host with userinfo (user@verify): 400');
check($refusal($get, 'verify/x') === '400', 'Host with a path (verify/x): 400 (nginx refuses it too)');
check($refusal($get, 'verify, other') === '400', 'Host holding a list (verify, other): 400 (nginx refuses the space too)');
check($refusal($get, 'verify:8080') === '', 'Host with a port (verify:8080): served');
check($refusal($get, '[::1]:8080') === '', 'Host as an IPv6 literal ([::1]:8080): served');
check($refusal($get, '127.0.0.1') === '', 'Host as IPv4 (127.0.0.1): served');
check($refusal('GET /hello HTTP/1.0', null) === '', 'HTTP/1.0 without Host: served');
// (no Host in HTTP/1.1, two Host lines, an empty Host: nginx's own 400, ngx_http_request.c)
// More Hosts: reg-name is unreserved, pct-encoded and sub-delims but the comma (a list).
foreach (['verify', 'Verify.Example.COM', 'verify:', 'verify:80', 'a-b_c~d.e', "it's!(*)+=;&\$x", '%41bc',
          '127.0.0.1:18006', '[::1]', '[2001:db8::1]:443', '[::ffff:192.0.2.1]'] as $host) {
    check($refusal($get, $host) === '', "Host '$host': served");
}
foreach (['user:pw@verify', '@verify', 'a,b', 'verify:80x', 'verify:80:81', '[::1', '::1', '[::1]x', '[::g]',
          "v\xc3\xa9rify", "verify\x7f", 'ver"ify', 'ver{ify}', 'verify\\x', '%zz', '%4', 'ver ify'] as $host) {
    check($refusal($get, $host) === '400', 'Host ' . show($host) . ': 400');
}

// The target cases.
check($refusal('GET http://verify/hello HTTP/1.1') === '', 'absolute-form (GET http://verify/hello): served as /hello');
check($refusal("GET /hello\xff HTTP/1.1") === '400', 'a raw byte above 0x7F in the target: 400');
check($refusal("GET /hello/\xc0\xaf HTTP/1.1") === '400', 'overlong UTF-8 in the target: 400');
check($refusal("GET /hel\x00lo HTTP/1.1") === '400', 'a NUL in the target: 400 (nginx\'s parser refuses it first)');
check($refusal("GET /hel\x01lo HTTP/1.1") === '400', 'a control byte in the target: 400 (nginx\'s parser refuses it first)');
// (a space ends the target on the request line; in $request_uri it would be refused too)
check(map_value($maps, 'invalid_request', ['request_uri' => '/a b', 'http_host' => 'verify']) === '1', "a space in \$request_uri: 400");
foreach (['/a"b', '/a<b>', '/a\\b', '/a^b', '/a`b', '/a{b}', '/a|b', '/a#frag', "/caf\xc3\xa9", "/?id=\xff"] as $target) {
    check($refusal("GET $target HTTP/1.1") === '400', 'target ' . show($target) . ': 400');
}
foreach (['/', '/hello', "/a-._~!\$&'()*+,;=:@/b?c=d/?%41", '/redis?id=1%20', '/redis?id=%zz'] as $target) {
    check($refusal("GET $target HTTP/1.1") === '', "target '$target': passed on");
}
// Every target of the contract's cases reaches PHP (a refusal would say Server: nginx).
$cases = json_decode(file_get_contents(__DIR__ . '/../../shared-schema/cases.json'), true, 512, JSON_THROW_ON_ERROR)['cases'];
foreach ($cases as $case) {
    check($refusal("{$case['method']} {$case['target']} HTTP/1.1") === '', "{$case['name']}: {$case['target']} passed on");
}

// The method cases.
check($refusal('CONNECT verify:443 HTTP/1.1', 'verify:443') === '501', 'CONNECT verify:443: 501 (from nginx\'s 400)');
check($refusal('CONNECT /hello HTTP/1.1') === '501', 'CONNECT /hello: 501 (from nginx\'s 405)');
check($refusal(str_repeat('G', 33) . ' /hello HTTP/1.1') === '501', 'a 33-byte method token: 501');
check($refusal(str_repeat('G', 100000) . ' /hello HTTP/1.1') === '501',
    'a 100 kB method token: 501 (nginx answers 414 first: the line does not fit its buffer)');
check($refusal(str_repeat('G', 32) . ' /hello HTTP/1.1') === '', 'a 32-byte method token: passed on (405)');
check($refusal("!#\$%&'*+.^_`|~0123456789abcdefXYZ /hello HTTP/1.1") === '501', 'a 33-byte token of every tchar: 501');
check($refusal('GE{T' . str_repeat('G', 40) . ' /hello HTTP/1.1') === '', 'a long method that is not a token: nginx\'s 400');
check($refusal('GE{T /hello HTTP/1.1') === '', 'a method that is not a token (GE{T): nginx\'s 400, not 501');
foreach (['GET', 'HEAD', 'POST', 'PUT', 'OPTIONS', 'TRACE', 'CONNECTX', 'XCONNECT'] as $method) {
    check($refusal("$method /hello HTTP/1.1") === '', "$method /hello: passed on");
}
check(map_value($maps, 'refusal_allow', ['request' => 'TRACE /hello HTTP/1.1']) === 'GET, HEAD', 'TRACE\'s 405 carries Allow');
check(map_value($maps, 'refusal_allow', ['request' => 'CONNECT /hello HTTP/1.1']) === '', 'CONNECT\'s 501 carries no Allow');

echo "php-fpm request-validity tests: $passed passed, $failed failed\n";
exit($failed === 0 ? 0 : 1);
