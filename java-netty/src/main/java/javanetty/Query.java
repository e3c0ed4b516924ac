package javanetty;

import io.netty.handler.codec.http.QueryStringDecoder;

import java.util.List;

/**
 * The contract's id rule on top of Netty's {@link QueryStringDecoder} (which splits the query and
 * percent-decodes names and values, '+' as a space): exactly one parameter named "id" whose value is
 * 1 to 9 ASCII digits without a leading zero. Other parameters are ignored; a query the decoder
 * cannot decode (a malformed escape anywhere in it) is a 400 like a malformed id.
 */
final class Query {
    /** '&' alone separates parameters (a ';' is part of a value), as in URLSearchParams and the other stacks. */
    private static final QueryStringDecoder.Builder DECODER = QueryStringDecoder.builder().semicolonIsNormalChar(true);

    private Query() {
    }

    /** The id of a request target such as {@code /redis?id=42}, or -1 for a 400. */
    static int id(String uri) {
        List<String> values;
        try {
            values = DECODER.build(uri).parameters().get("id");
        } catch (IllegalArgumentException malformedEscape) {
            return -1;
        }
        return values == null || values.size() != 1 ? -1 : digits(values.get(0));
    }

    /** 1 to 9 ASCII digits without a leading zero, else -1. */
    static int digits(String v) {
        int n = v.length();
        if (n < 1 || n > 9 || v.charAt(0) == '0') return -1;
        int value = 0;
        for (int i = 0; i < n; i++) {
            char c = v.charAt(i);
            if (c < '0' || c > '9') return -1;
            value = value * 10 + (c - '0');
        }
        return value;
    }
}
