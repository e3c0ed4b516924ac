package javatio;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The contract's id rule on raw query strings (cases.json's forms and a few more). */
class IdsTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "id=1|1", "id=42|42", "id=10000|10000", "id=999999999|999999999", "x=1&id=42&y=|42", "id=%34%32|42",
            "&&id=7&&|7", "id=5&|5", "a&id=3|3", "%69%64=8|8", "i%64=8|8",
            "''|-1", "id=|-1", "id|-1", "id=abc|-1", "id=-1|-1", "id=%2B1|-1", "id=+1|-1", "id=007|-1", "id=0|-1",
            "id=1e3|-1", "id=1234567890|-1", "id=1&id=2|-1", "id=1&id=1|-1", "id=1%20|-1", "id=%zz|-1", "id=%4|-1",
            "id=%|-1", "ID=1|-1", "id =1|-1", "x=1|-1", "id=1.0|-1", "id=١|-1",
    })
    void id(String query, int expected) {
        assertEquals(expected, Ids.parse(query), query);
    }
}
