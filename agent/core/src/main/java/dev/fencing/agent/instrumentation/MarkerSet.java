package dev.fencing.agent.instrumentation;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Every instrumentation's class-file marker, searched in one pass over a class file. The transformer runs this for
 * every class the application loads (15-20 thousand in a Spring Boot service); one naive search per instrumentation
 * was a quarter of the startup CPU of such a service. Here each byte position costs one bit test: a bit set of the
 * markers' first two bytes rejects nearly every position, and only positions whose pair starts a marker compare it.
 * Answers exactly what a separate search per marker would (any occurrence anywhere in the bytes).
 */
final class MarkerSet {
  /** At most this many distinct markers (bits of the result). */
  static final int MAX = 64;

  private final byte[][] markers;
  /** Bit (b0 << 8 | b1) set when some marker starts with bytes b0, b1. */
  private final long[] pairs = new long[1024];

  /** Distinct markers of at least two ASCII characters, at most {@link #MAX}. */
  MarkerSet(List<String> distinct) {
    if (distinct.size() > MAX) {
      throw new IllegalArgumentException(distinct.size() + " markers given, at most " + MAX + " supported");
    }
    markers = new byte[distinct.size()][];
    for (int i = 0; i < markers.length; i++) {
      byte[] m = distinct.get(i).getBytes(StandardCharsets.US_ASCII);
      if (m.length < 2) {
        throw new IllegalArgumentException("marker '" + distinct.get(i) + "' is shorter than two characters");
      }
      markers[i] = m;
      int pair = (m[0] & 0xff) << 8 | (m[1] & 0xff);
      pairs[pair >>> 6] |= 1L << pair;
    }
  }

  int size() {
    return markers.length;
  }

  /** Bit i set when marker i occurs in {@code bytes}. */
  long find(byte[] bytes) {
    long found = 0;
    long all = markers.length == MAX ? -1L : (1L << markers.length) - 1;
    int last = bytes.length - 1;
    int pair = last >= 0 ? (bytes[0] & 0xff) : 0;
    for (int i = 0; i < last; i++) {
      pair = (pair << 8 | (bytes[i + 1] & 0xff)) & 0xffff;
      if ((pairs[pair >>> 6] & (1L << pair)) == 0) {
        continue;
      }
      for (int k = 0; k < markers.length; k++) {
        if ((found & (1L << k)) == 0 && startsAt(bytes, i, markers[k])) {
          found |= 1L << k;
          if (found == all) {
            return found;
          }
        }
      }
    }
    return found;
  }

  private static boolean startsAt(byte[] bytes, int at, byte[] marker) {
    if (at + marker.length > bytes.length) {
      return false;
    }
    for (int j = 0; j < marker.length; j++) {
      if (bytes[at + j] != marker[j]) {
        return false;
      }
    }
    return true;
  }

  /** Index of {@code marker} in {@code distinct}, adding it when new. */
  static int indexOf(List<String> distinct, String marker) {
    int i = distinct.indexOf(marker);
    if (i >= 0) {
      return i;
    }
    distinct.add(marker);
    return distinct.size() - 1;
  }

  static List<String> newList() {
    return new ArrayList<>();
  }
}
