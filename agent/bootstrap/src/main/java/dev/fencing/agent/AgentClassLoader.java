package dev.fencing.agent;

import java.io.IOException;
import java.io.InputStream;
import java.net.MalformedURLException;
import java.net.URL;
import java.security.CodeSource;
import java.security.ProtectionDomain;
import java.security.cert.Certificate;
import java.util.Collections;
import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Loads the agent core and everything it bundles from the {@code inst/} folder of the agent jar, where classes are
 * stored as {@code .classdata}: neither the bootstrap nor the application class loader can see them, so the
 * application keeps its own versions of grpc, netty, guava, micrometer and the rest.
 *
 * <p>Parent is the platform loader (the core needs java.sql, java.net.http and jdk.httpserver, never application
 * classes); the bootstrap part ({@code dev.fencing.agent.bootstrap}) is taken from the loader that holds it, so the
 * core and the instrumented JDK classes share one copy.
 */
final class AgentClassLoader extends ClassLoader {
  static final String PREFIX = "inst/";
  private static final String BOOTSTRAP_PACKAGE = "dev.fencing.agent.bootstrap.";

  static {
    registerAsParallelCapable();
  }

  private final JarFile jar;
  private final String jarUrl;
  private final ClassLoader bootstrapPartLoader;
  private final ProtectionDomain domain;

  AgentClassLoader(JarFile jar, URL jarLocation, ClassLoader bootstrapPartLoader) {
    super("fencing-agent", ClassLoader.getPlatformClassLoader());
    this.jar = jar;
    this.jarUrl = "jar:" + jarLocation.toExternalForm() + "!/";
    this.bootstrapPartLoader = bootstrapPartLoader;
    this.domain = new ProtectionDomain(new CodeSource(jarLocation, (Certificate[]) null), null, this, null);
  }

  @Override
  protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
    if (name.startsWith(BOOTSTRAP_PACKAGE)) {
      return Class.forName(name, false, bootstrapPartLoader);
    }
    return super.loadClass(name, resolve);
  }

  @Override
  protected Class<?> findClass(String name) throws ClassNotFoundException {
    JarEntry entry = jar.getJarEntry(PREFIX + name.replace('.', '/') + ".classdata");
    if (entry == null) {
      throw new ClassNotFoundException(name);
    }
    byte[] bytes;
    try (InputStream in = jar.getInputStream(entry)) {
      // Exactly the class's size when the jar records it (it does): readAllBytes() would read through 8 KB chunk
      // buffers and copy, tripling the startup garbage of the ~4,000 classes the agent loads (BENCHMARKS.md, RSS).
      long size = entry.getSize();
      if (size >= 0 && size < Integer.MAX_VALUE) {
        bytes = new byte[(int) size];
        if (in.readNBytes(bytes, 0, bytes.length) != bytes.length) {
          throw new ClassNotFoundException(name + ": truncated entry " + entry.getName());
        }
      } else {
        bytes = in.readAllBytes();
      }
    } catch (IOException e) {
      throw new ClassNotFoundException(name, e);
    }
    int dot = name.lastIndexOf('.');
    if (dot > 0) {
      String pkg = name.substring(0, dot);
      if (getDefinedPackage(pkg) == null) {
        try {
          definePackage(pkg, null, null, null, null, null, null, null);
        } catch (IllegalArgumentException alreadyDefinedByAnotherThread) {
          // fine
        }
      }
    }
    return defineClass(name, bytes, 0, bytes.length, domain);
  }

  @Override
  protected URL findResource(String name) {
    String entryName = PREFIX + (name.endsWith(".class") ? name.substring(0, name.length() - 6) + ".classdata" : name);
    if (jar.getEntry(entryName) == null) {
      return null;
    }
    try {
      return new URL(jarUrl + entryName);
    } catch (MalformedURLException e) {
      return null;
    }
  }

  @Override
  protected Enumeration<URL> findResources(String name) {
    URL url = findResource(name);
    return url == null ? Collections.emptyEnumeration() : Collections.enumeration(Collections.singletonList(url));
  }
}
