package dev.fencing.agent.lease;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The type of a TLS trust or key store file, as ZooKeeper's client names it ({@code PEM}, {@code JKS},
 * {@code PKCS12}). ZooKeeper guesses only from the extensions {@code .pem}, {@code .jks} and {@code .p12}; a CA
 * certificate is most often a {@code ca.crt}, so a file whose text starts with a {@code -----BEGIN} line is PEM
 * whatever its name, {@code .jks} is JKS, and anything else PKCS12 (the JDK's default key store type).
 */
final class StoreType {
  private StoreType() {}

  static String of(Path file) throws IOException {
    byte[] head = new byte[64];
    int n;
    try (InputStream in = Files.newInputStream(file)) {
      n = in.readNBytes(head, 0, head.length);
    }
    if (new String(head, 0, n, StandardCharsets.US_ASCII).strip().startsWith("-----BEGIN")) {
      return "PEM";
    }
    String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
    return name.endsWith(".jks") ? "JKS" : "PKCS12";
  }
}
