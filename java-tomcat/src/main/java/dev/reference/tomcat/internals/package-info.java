/**
 * Every place this stack reaches past a public API (Tomcat's coyote and connector internals, the
 * class behind HikariCP's MXBean), kept in this one package. Each has a row in the README's
 * Workarounds table and a one-line comment where it happens.
 */
package dev.reference.tomcat.internals;
