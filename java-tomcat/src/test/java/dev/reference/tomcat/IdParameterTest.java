package dev.reference.tomcat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The contract's id rule: every data case of shared-schema/cases.json, then malformed forms of our own. */
class IdParameterTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** Every /redis, /mysql and /memcache case: its query string, the status, and the id a 200 answers with. */
    static Stream<Arguments> contractCases() {
        JsonNode cases = JSON.readTree(Path.of("..", "shared-schema", "cases.json").toFile()).get("cases");
        List<Arguments> out = new ArrayList<>();
        for (JsonNode c : cases) {
            String target = c.get("target").asString();
            if (!target.matches("/(redis|mysql|memcache)/?(\\?.*)?")) {
                continue;
            }
            int q = target.indexOf('?');
            String query = q < 0 ? null : target.substring(q + 1);
            JsonNode expect = c.get("expect");
            int status = expect.get("status").asInt();
            String body = expect.get("body").asString();
            int id = status == 200 && !body.isEmpty() ? JSON.readTree(body).get("id").asInt() : -1; // HEAD: no body
            out.add(Arguments.of(c.get("name").asString(), query, status, id));
        }
        assertTrue(out.size() >= 60, "cases.json's data cases were not found: " + out.size());
        return out.stream();
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("contractCases")
    void everyDataCaseOfTheContract(String name, String query, int status, int id) {
        if (status == 400) {
            assertSame(ContractError.BAD_REQUEST, assertThrows(ContractError.class, () -> IdParameter.parse(query)));
        } else if (id > 0) {
            assertEquals(id, IdParameter.parse(query));
        } else {
            // HEAD, 404 (no such row, a trailing slash), 405 (POST): decided after or before the id, which is valid
            assertTrue(IdParameter.parse(query) > 0);
        }
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(strings = {
            "", "id", "id=", "&", "&&", "=1", "id==1", "id=1=", "id=1&id=1", "id=1&%69d=2", "id=%", "id=%4", "id=4%",
            "id=%g1", "id=%D9%A1", "id=%EF%BC%91", "id=１", "id=1%00", "id=%00", "id=12345678901", "id=0001",
            "id=00", "id=1.0", "id=1,2", "id=0x1", "id=+", "id=%2D1", "id=1+", "id= 1", "id=1;", "id=2147483648",
            "id=99999999999999999999", "ID=1", "Id=1", "id%3D1", "iD=1", "%69%64", "x=1"})
    void malformedIsABadRequest(String query) {
        assertSame(ContractError.BAD_REQUEST, assertThrows(ContractError.class, () -> IdParameter.parse(query)));
    }

    static Stream<Arguments> wellFormed() {
        return Stream.of(
                Arguments.of("id=1", 1),
                Arguments.of("id=999999999", 999999999),
                Arguments.of("&id=7&", 7),
                Arguments.of("a&id=7&b", 7),
                Arguments.of("%69d=5", 5),
                Arguments.of("%69%64=%35", 5),
                Arguments.of("id=%31%32", 12),
                Arguments.of("ID=1&id=3", 3),
                Arguments.of("idx=1&id=3&xid=2", 3),
                Arguments.of("%zz=1&id=8", 8),
                Arguments.of("id=6&x=%zz", 6));
    }

    @ParameterizedTest(name = "{0} → {1}")
    @MethodSource("wellFormed")
    void wellFormedIds(String query, int id) {
        assertEquals(id, IdParameter.parse(query));
    }
}
