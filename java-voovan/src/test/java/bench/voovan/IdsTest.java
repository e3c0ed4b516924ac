package bench.voovan;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.io.File;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Ids.parse: every id form of shared-schema/cases.json, and malformed ones beyond it. */
class IdsTest {
    private static final Set<String> DATA = Set.of("/redis", "/mysql", "/memcache");

    /** The golden cases' raw query of a data endpoint: 400 means no id (-1), 200 or 404 the id in the query. */
    @Test
    void everyIdFormOfTheGoldenCases() {
        JsonNode cases = new ObjectMapper().readTree(new File("../shared-schema/cases.json")).get("cases");
        int checked = 0, refused = 0;
        for (JsonNode c : cases) {
            String method = c.get("method").asString();
            String target = c.get("target").asString();
            int q = target.indexOf('?');
            String path = q < 0 ? target : target.substring(0, q);
            if (!DATA.contains(path) || !(method.equals("GET") || method.equals("HEAD"))) continue;
            String query = q < 0 ? null : target.substring(q + 1);
            int status = c.get("expect").get("status").asInt();
            int id = Ids.parse(query);
            if (status == 400) {
                assertEquals(-1, id, c.get("name").asString());
                refused++;
            } else {
                assertTrue(status == 200 || status == 404, c.get("name").asString());
                assertTrue(id >= 1, c.get("name").asString() + ": " + query);
                // the id is the digits of the one "id" parameter, percent-decoded
                assertTrue(java.net.URLDecoder.decode(query, java.nio.charset.StandardCharsets.UTF_8)
                        .matches("(.*&)?id=" + id + "(&.*)?"), c.get("name").asString());
            }
            checked++;
        }
        assertTrue(checked >= 60 && refused >= 30, checked + " cases, " + refused + " refused");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', nullValues = "NULL", value = {
            "id=1|1", "id=999999999|999999999", "id=123456789|123456789", "id=%31%30|10", "i%64=5|5",
            "x=1&id=42&y=|42", "&id=7&|7", "id=7&&|7", "id=7&id|-1", "id=7&id=|-1", "id=7&id=7|-1",
            "NULL|-1", "''|-1", "id|-1", "id=|-1", "=1|-1", "ID=1|-1", "iD=1|-1", "id =1|-1", "id= 1|-1",
            "'id=1 '|-1", "id=+1|-1", "id=1+|-1", "id=%2B1|-1", "id=-1|-1", "id=0|-1", "id=00|-1", "id=01|-1",
            "id=1000000000|-1", "id=1e3|-1", "id=0x1|-1", "id=1.0|-1", "id=%|-1", "id=%3|-1", "id=%zz|-1",
            "id=1%|-1", "id=%3g|-1", "id=1%00|-1", "id=١|-1", "id=%D9%A1|-1", "id=１|-1", "x=%zz&id=3|3",
            "%zz=1&id=3|3", "id=3&x=%|3", "i%zz=1&id=4|4", "id%3D5|-1", "id=5%26id=6|-1",
    })
    void idForms(String query, int expected) {
        assertEquals(expected, Ids.parse(query));
    }

    @Test
    void decodeRefusesMalformedEscapes() {
        assertNull(Ids.decode("%", 0, 1));
        assertNull(Ids.decode("%4", 0, 2));
        assertNull(Ids.decode("%g0", 0, 3));
        assertEquals("a b+", Ids.decode("a+b%2B", 0, 6));
        assertEquals("é", Ids.decode("%C3%A9", 0, 6));
    }
}
