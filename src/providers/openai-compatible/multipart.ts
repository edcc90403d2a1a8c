/**
 * A minimal multipart/form-data encoder: text fields and file parts into one Buffer. Built by
 * hand rather than with FormData/Blob so the bytes sent are exactly the ones we can reason
 * about (and test), with a known Content-Length and no stream plumbing.
 */
import { randomUUID } from 'node:crypto';

export interface MultipartFile {
  data: Buffer;
  filename: string;
  contentType: string;
}

export class MultipartBuilder {
  private readonly boundary = `----svc-${randomUUID()}`;
  private readonly parts: Buffer[] = [];

  field(name: string, value: string): this {
    this.parts.push(Buffer.from(`--${this.boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`));
    return this;
  }

  file(name: string, file: MultipartFile): this {
    this.parts.push(
      Buffer.from(
        `--${this.boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"; filename="${quote(file.filename)}"\r\n` +
          `Content-Type: ${file.contentType.replace(/[\r\n]/g, '')}\r\n\r\n`,
      ),
      file.data,
      Buffer.from('\r\n'),
    );
    return this;
  }

  build(): { body: Buffer; contentType: string } {
    return {
      body: Buffer.concat([...this.parts, Buffer.from(`--${this.boundary}--\r\n`)]),
      contentType: `multipart/form-data; boundary=${this.boundary}`,
    };
  }
}

/** Names and filenames come from users: keep them from breaking out of the quoted header value. */
function quote(value: string): string {
  return value.replace(/[\r\n]/g, ' ').replace(/"/g, '%22');
}
