//go:build !unix

package server

func adjustOpenFilesLimit(maxClients int, _ func(string, ...any)) (int, error) {
	return maxClients, nil
}
