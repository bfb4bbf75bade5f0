package org.example.modules;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;

/**
 * A class loader like JBoss Modules' or an OSGi bundle's: parent-last, and the parent is asked only for the JDK
 * ({@code java.}, {@code javax.}, {@code jdk.}, {@code sun.}) and a fixed list of packages; everything else comes from
 * the module's own jars or is not found. In particular it never delegates {@code dev.fencing.agent.bootstrap.}, the
 * package an agent appends to the boot class path. Outside the agent's packages on purpose: the agent instruments
 * class loaders, never its own classes.
 */
public final class ModuleLoader extends URLClassLoader {
  static {
    registerAsParallelCapable();
  }

  private static final String[] DELEGATED = {"java.", "javax.", "jdk.", "sun.", "com.sun.", "org.xml.", "org.w3c."};

  public ModuleLoader(String name, URL[] jars, ClassLoader parent) {
    super(name, jars, parent);
  }

  @Override
  protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
    for (String p : DELEGATED) {
      if (name.startsWith(p)) {
        return getParent().loadClass(name);
      }
    }
    synchronized (getClassLoadingLock(name)) {
      Class<?> c = findLoadedClass(name);
      if (c == null) {
        c = findClass(name); // ClassNotFoundException: not in this module, and no fallback to the parent
      }
      if (resolve) {
        resolveClass(c);
      }
      return c;
    }
  }

  @Override
  public URL getResource(String name) {
    for (String p : DELEGATED) {
      if (name.startsWith(p.replace('.', '/'))) {
        return getParent().getResource(name);
      }
    }
    return findResource(name); // otherwise the module's own resources only, as for its classes
  }

  @Override
  public InputStream getResourceAsStream(String name) {
    URL u = getResource(name);
    try {
      return u == null ? null : u.openStream();
    } catch (IOException e) {
      return null;
    }
  }
}
