package dev.fencing.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares a section: with the Fencing Agent attached, the annotated method runs in the scope of the agent's lock
 * {@link #value()}, exactly as a method named in the agent's {@code fencing.sections} does. A {@code void} method runs
 * only while this JVM holds the lock (it is skipped otherwise); any other method always runs, and its side effects are
 * decided by the lock (tagged with its token while it is held, refused as on standby otherwise). Without the agent
 * the annotation does nothing: the method just runs.
 *
 * <p>Only the annotated method itself, not an overriding one; abstract and native methods are ignored.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Fenced {
  /** The lock's name: 1 to 128 of {@code [A-Za-z0-9._-]}, as the fences of the resources it protects know it. */
  String value();
}
