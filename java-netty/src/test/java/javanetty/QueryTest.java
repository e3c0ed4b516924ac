package javanetty;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.json.JsonFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The id rule (Query.id) against every data-endpoint target of shared-schema/cases.json, and malformed ones beyond it. */
class QueryTest {
    private static final Pattern BODY_ID = Pattern.compile("\\{\"id\":(\\d+),");

    record Case(String name, String method, String target, int status, String body) {
    }

    /** Every case of cases.json (the file the verifier's golden answers come from). */
    static List<Case> cases() throws Exception {
        List<Case> out = new ArrayList<>();
        try (JsonParser p = new JsonFactory().createParser(Files.readAllBytes(Path.of("../shared-schema/cases.json")))) {
            String name = null, method = null, target = null, body = null, field = null;
            int status = 0, depth = 0; // the root object is depth 1, each case 2, its "expect" 3
            for (JsonToken t; (t = p.nextToken()) != null; ) {
                switch (t) {
                    case START_OBJECT -> depth++;
                    case END_OBJECT -> {
                        if (depth == 2 && target != null) out.add(new Case(name, method, target, status, body));
                        if (depth == 2) {
                            name = method = target = body = null;
                            status = 0;
                        }
                        depth--;
                    }
                    case START_ARRAY -> {
                        if (depth >= 2) p.skipChildren();
                    }
                    case PROPERTY_NAME -> field = p.currentName();
                    case VALUE_STRING, VALUE_NUMBER_INT -> {
                        if (depth == 2 && "name".equals(field)) name = p.getString();
                        if (depth == 2 && "method".equals(field)) method = p.getString();
                        if (depth == 2 && "target".equals(field)) target = p.getString();
                        if (depth == 3 && "status".equals(field)) status = p.getIntValue();
                        if (depth == 3 && "body".equals(field)) body = p.getString();
                    }
                    default -> { }
                }
            }
        }
        return out;
    }

    @Test
    void everyIdFormOfTheGoldenCases() throws Exception {
        int checked = 0;
        for (Case c : cases()) {
            String path = c.target().contains("?") ? c.target().substring(0, c.target().indexOf('?')) : c.target();
            if (!List.of("/redis", "/mysql", "/memcache").contains(path) || c.status() == 405) continue;
            int id = Query.id(c.target());
            if (c.status() == 400) {
                assertEquals(-1, id, c.name() + ": " + c.target() + " must be refused");
            } else if (c.status() == 200 && !c.body().isEmpty()) { // the id the JSON answer carries
                Matcher m = BODY_ID.matcher(c.body());
                assertTrue(m.find(), c.name());
                assertEquals(Integer.parseInt(m.group(1)), id, c.name() + ": " + c.target());
            } else { // HEAD, or 404 (a well-formed id the backend does not hold): the id as written
                assertEquals(Integer.parseInt(c.target().substring(c.target().lastIndexOf('=') + 1)), id, c.name());
            }
            checked++;
        }
        assertTrue(checked >= 90, "cases.json's data cases were read: " + checked);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "/redis?id=1|1",
            "/redis?id=999999999|999999999",
            "/redis?id=%34%32|42",
            "/redis?id=4%32|42",
            "/redis?%69d=7|7",              // the name is percent-decoded too
            "/redis?i%64=7|7",
            "/redis?x=1&id=42&y=|42",
            "/redis?&&id=5&&|5",
            "/redis?=1&id=5|5",
            "/redis?id=5&x|5",
            "/redis?x=%E2%82%AC&id=5|5",    // other parameters decode freely
            "/redis|-1",
            "/redis?|-1",
            "/redis?id|-1",                 // no '=': an empty value
            "/redis?id=|-1",
            "/redis?id=1&id=1|-1",          // repeated, even with the same value
            "/redis?id=1&id=|-1",
            "/redis?ID=1|-1",
            "/redis?id%20=1|-1",
            "/redis?id+=1|-1",
            "/redis?+id=1|-1",
            "/redis?id=+1|-1",
            "/redis?id=1+|-1",
            "/redis?id=%2B1|-1",
            "/redis?id=%201|-1",
            "/redis?id=1%20|-1",
            "/redis?id=-1|-1",
            "/redis?id=0|-1",
            "/redis?id=00|-1",
            "/redis?id=007|-1",
            "/redis?id=1e3|-1",
            "/redis?id=0x1F|-1",
            "/redis?id=1.0|-1",
            "/redis?id=1234567890|-1",      // ten digits
            "/redis?id=2147483648|-1",
            "/redis?id=abc|-1",
            "/redis?id=%zz|-1",             // malformed escapes
            "/redis?id=%3|-1",
            "/redis?id=%|-1",
            "/redis?id=1%|-1",
            "/redis?id=%%31|-1",
            "/redis?x=%zz&id=1|-1",         // a query that does not decode is refused as a whole
            "/redis?id=%EF%BC%91|-1",       // fullwidth digit one: a Unicode digit, not an ASCII one
            "/redis?id=%D9%A1|-1",          // Arabic-Indic digit one
            "/redis?id=1;x=2|-1",           // ';' is part of the value
            "/redis?x=1;id=5|-1",
            "/redis?id=%00|-1",
    })
    void idForms(String target, int expected) {
        assertEquals(expected, Query.id(target), target);
    }

    @Test
    void digitsAlone() {
        assertEquals(1, Query.digits("1"));
        assertEquals(123456789, Query.digits("123456789"));
        assertEquals(-1, Query.digits(""));
        assertEquals(-1, Query.digits("0123"));
        assertEquals(-1, Query.digits("12345678a"));
        assertEquals(-1, Query.digits("\u0661"));
    }
}
