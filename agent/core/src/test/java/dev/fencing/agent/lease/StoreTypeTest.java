package dev.fencing.agent.lease;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoreTypeTest {
  @Test
  void aPemFileIsPemWhateverItsNameAndOtherwiseTheExtensionDecides(@TempDir Path dir) throws Exception {
    String pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    assertThat(StoreType.of(Files.writeString(dir.resolve("ca.crt"), pem))).isEqualTo("PEM");
    assertThat(StoreType.of(Files.writeString(dir.resolve("client.pem"), "\n" + pem))).isEqualTo("PEM");
    assertThat(StoreType.of(Files.writeString(dir.resolve("key"), "-----BEGIN PRIVATE KEY-----\n"))).isEqualTo("PEM");
    byte[] binary = {(byte) 0xfe, (byte) 0xed, (byte) 0xfe, (byte) 0xed, 0, 0, 0, 2};
    assertThat(StoreType.of(Files.write(dir.resolve("trust.JKS"), binary))).isEqualTo("JKS");
    assertThat(StoreType.of(Files.write(dir.resolve("trust.p12"), new byte[] {0x30, (byte) 0x82}))).isEqualTo("PKCS12");
    assertThat(StoreType.of(Files.write(dir.resolve("truststore"), new byte[0]))).isEqualTo("PKCS12");
  }
}
